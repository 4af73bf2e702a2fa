"""The README's main job: ``python -m npgrad.demo`` (see ``__main__``)."""
