"""Verify stage: the rendered OpenSM files checked by the real OpenSM in the ibsim simulator.

Public entry: `ffplan.verify.run.verify(target, ...) -> Report`. Its parts: `inputs` (the plan and the files),
`static` (checks of the files alone), `boot` (one simulated run, read back), `checks` and `qos` (checks of what
OpenSM installed), `expect` (what the plan expects), `compare` (ffplan next to OpenSM's ftree), `report`; the
tools underneath: `sim` (ibsim and OpenSM processes), `parse` (their outputs), `walk` (tables hop by hop).
"""
