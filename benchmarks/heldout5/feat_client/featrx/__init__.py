"""Client of a feature server: fixed-size float16 rows read into one reused buffer."""
