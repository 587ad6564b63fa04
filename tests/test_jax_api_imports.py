"""The import forms JAX programs use work with mjcore in place of jax, and the new modules
load on first use (not at `import mjcore`)."""

import subprocess
import sys


def test_jax_style_imports_and_config():
    import mjcore
    from mjcore import config, lax
    from mjcore.example_libraries import optimizers, stax
    from mjcore.flatten_util import ravel_pytree
    from mjcore.scipy import linalg, stats
    from mjcore.scipy.stats import norm

    old = config.jax_enable_x64
    config.update("jax_enable_x64", True)
    try:
        assert config.jax_enable_x64 is True
        assert mjcore.config.read("jax_enable_x64") is True
    finally:
        config.update("jax_enable_x64", old)
    assert lax.Precision.HIGHEST.name == "HIGHEST"
    assert mjcore.example_libraries.optimizers is optimizers
    assert mjcore.example_libraries.stax is stax
    assert mjcore.flatten_util.ravel_pytree is ravel_pytree
    assert mjcore.scipy.linalg is linalg and mjcore.scipy.stats.norm is norm is stats.norm


def test_new_modules_load_on_first_use():
    code = (
        "import sys, mjcore\n"
        "lazy = ['mjcore.example_libraries', 'mjcore.flatten_util', 'mjcore.scipy.linalg',\n"
        "        'mjcore.scipy.stats']\n"
        "assert not [m for m in lazy if m in sys.modules], [m for m in lazy if m in sys.modules]\n"
        "mjcore.scipy.stats.norm.logpdf(0.0)\n"
        "mjcore.example_libraries.optimizers.sgd(0.1)\n"
        "mjcore.flatten_util.ravel_pytree([1.0])\n"
        "mjcore.scipy.linalg.hilbert(2)\n"
        "assert 'jax' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)
