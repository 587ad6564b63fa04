"""The only layer that knows XLA: StableHLO text, the PJRT client, buffers, compile, execute."""
