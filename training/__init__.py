"""CompoWorld training."""
