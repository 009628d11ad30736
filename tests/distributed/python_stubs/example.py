"""Python's side of the generated class example.MyData (examples/mydata.yaml), so that Python
tensordict can rebuild the MyData a C++ rank sends (its metadata names "example.MyData")."""

import torch
from tensordict import tensorclass


@tensorclass
class MyData:
    obs: torch.Tensor
    label: str
    extra: torch.Tensor | None = None
