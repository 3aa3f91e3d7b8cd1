"""Code generated from the models (`placement_cli.formats.codegen`, `make schemas`): do not edit."""
