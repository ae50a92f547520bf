"""Model loaders built on a shared base class."""
