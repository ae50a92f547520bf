"""Engine-core output path: batches of request outputs framed and pushed to the frontend."""
