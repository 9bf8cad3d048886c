"""Reference kernels and drill specs: plain PyTorch, no studyapp imports.

Loaded by `studyapp.kernels_loader.load_kernels()` as `studyapp_kernels`; modules inside this
folder import each other relatively.
"""
