"""npgrad.nn.modules: the layer classes, one small module per family."""
from __future__ import annotations

from .activation import GELU, LeakyReLU, LogSoftmax, ReLU, SiLU, Sigmoid, Softmax, Tanh
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv1d, Conv2d
from .dropout import Dropout
from .flatten import Flatten, Unflatten
from .linear import Identity, Linear
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss, MSELoss,
                   NLLLoss, SmoothL1Loss)
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool1d, MaxPool2d
from .sparse import Embedding
# layer imports [special]
# layer imports [shape]
# layer imports [sorting]
# layer imports [nn]

__all__ = [
    "Module", "Identity", "Linear", "Conv1d", "Conv2d", "MaxPool1d", "MaxPool2d", "AvgPool2d",
    "AdaptiveAvgPool2d", "Flatten", "Unflatten", "Dropout", "BatchNorm1d", "BatchNorm2d",
    "LayerNorm", "Embedding", "ReLU", "LeakyReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax",
    "LogSoftmax", "Sequential", "ModuleList", "ModuleDict", "L1Loss", "MSELoss", "SmoothL1Loss",
    "HuberLoss", "NLLLoss", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss",
]
# layer names [special]
# layer names [shape]
# layer names [sorting]
# layer names [nn]
