"""The differential fuzzer's machinery: argument generators, outcome capture and comparison,
the cases, process isolation for risky calls and the registry of known differences.

The test module is tests/test_fuzz_differential.py.  From tests/, ``python -m fuzz.survey``
writes the survey of mismatches and ``python -m fuzz.relist`` the listed known differences.
Nothing here imports torch at module level: the caller passes the torch module in, so the
package imports (and its test skips) without torch.
"""
