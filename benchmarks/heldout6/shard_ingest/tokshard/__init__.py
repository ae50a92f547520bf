"""Reads pre-tokenised training shards: fixed-size int32 records, one reused read buffer per reader."""
