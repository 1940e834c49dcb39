"""CompoWorld composer."""
