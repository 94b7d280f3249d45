"""Policy parts: action selection kernels, composed by the generated engine kernels."""
