"""torch.compile integration: the graph pass, the convt3d backend, enable()/disable()."""
