"""The project-wide fixpoint: summaries propagated over call edges until nothing changes."""
