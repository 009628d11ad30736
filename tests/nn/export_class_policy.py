"""Exports a policy that takes and returns generated classes (tests/nn/policy.yaml's Sensed and
Decision, from tcgen's Python module), packages it with AOTInductor, and saves an input and
Python's output beside it, as memmap directories of the classes:

    PYTHONPATH=<tcgen's module dir>:<tensordict> python3 export_class_policy.py OUT_DIR

OUT_DIR/package.pt2, OUT_DIR/input (a Sensed), OUT_DIR/expected (the Decision Python computed).
The batch dim is dynamic (1..64); `mode` is a constant of the export, as a non-tensor field is.
"""
import sys

import torch
from nntest import Decision, Goal, Sensed


class ClassPolicy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(5, 3)
        self.value = torch.nn.Linear(5, 1)

    def forward(self, sensed: Sensed) -> Decision:
        logits = self.body(sensed.observation) + sensed.goal.bias
        scale = 2.0 if sensed.mode == "greedy" else 1.0
        return Decision(
            action=logits.argmax(-1),
            value=self.value(sensed.observation) * scale,
            goal=Goal(bias=sensed.goal.bias * 0.5, batch_size=sensed.batch_size),
            source="class-policy",
            batch_size=sensed.batch_size,
        )


def main(out):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    policy = ClassPolicy().eval()
    batch = 6
    sensed = Sensed(
        observation=torch.randn(batch, 5),
        goal=Goal(bias=torch.randn(batch, 3), batch_size=[batch]),
        mode="greedy",
        batch_size=[batch],
    )
    dim = torch.export.Dim("batch", min=1, max=64)
    # One entry per child of the class's pytree node: its fields that are set, in order.
    program = torch.export.export(policy, (sensed,), dynamic_shapes=([{0: dim}, [{0: dim}]],))
    torch._inductor.aoti_compile_and_package(program, package_path=f"{out}/package.pt2")
    with torch.no_grad():
        expected = policy(sensed)
    sensed.memmap(f"{out}/input")
    expected.memmap(f"{out}/expected")


if __name__ == "__main__":
    main(sys.argv[1])
