"""The op layer: every differentiable op defined once (forward, backward rule, grad_fn name)."""
