"""CompoWorld generator."""
