"""Layer 5, pipeline: the Stage protocol, the stage registry, loading inputs and running stages."""
