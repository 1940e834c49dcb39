"""Experiments that run the training code end to end: the offline learning experiment and the GPU check."""
