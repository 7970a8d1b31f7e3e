"""The built-in transforms, one module each: its declaration (`approxcc.registry`) and its
rewrite pattern. `approxcc.registry` imports every module here at its first lookup."""
