"""Model definitions the benchmark runs on npgrad and on torch alike (the library is passed in)."""
