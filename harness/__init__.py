"""CompoWorld harness."""
