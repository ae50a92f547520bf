"""Wire I/O of a detokeniser process: ZMQ output frames, a TCP frame reader, a record log reader."""
