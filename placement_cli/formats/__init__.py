"""Layer 2, formats: the plan, body, artifact-section and tree file formats, their fast checks and renderers."""
