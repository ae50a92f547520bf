"""An embedding-cache server: row lookups answered over ZMQ from a host-resident table."""
