"""A vectorised environment whose workers write observations into one shared-memory block."""
