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
from .activation import (CELU, ELU, GLU, SELU, Hardsigmoid, Hardswish, Hardtanh,  # noqa: E402
                         LogSigmoid, Mish, ReLU6, Softmin, Softplus, Softsign)
# layer imports [shape]
# layer imports [sorting]
from .loss import (CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss,  # noqa: E402
                   KLDivLoss, MarginRankingLoss, PoissonNLLLoss, SoftMarginLoss,
                   TripletMarginLoss)
# layer imports [nn]
# layer imports [vision]
from .conv import ConvTranspose1d, ConvTranspose2d  # noqa: E402
from .dropout import AlphaDropout, Dropout1d, Dropout2d  # noqa: E402
from .linear import Bilinear  # noqa: E402
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d,  # noqa: E402
                      ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d,
                      ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
                      ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .pixelshuffle import Fold, PixelShuffle, PixelUnshuffle, Unfold  # noqa: E402
from .pooling import (AdaptiveAvgPool1d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,  # noqa: E402
                      AvgPool1d, LPPool1d, LPPool2d)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: E402
from .container import ParameterDict, ParameterList  # noqa: E402
from .normalization import GroupNorm, InstanceNorm1d, InstanceNorm2d  # noqa: E402
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase  # noqa: E402
from .attention import MultiheadAttention  # noqa: E402
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,  # noqa: E402
                          TransformerEncoder, TransformerEncoderLayer)

__all__ = [
    "Module", "Identity", "Linear", "Conv1d", "Conv2d", "MaxPool1d", "MaxPool2d", "AvgPool2d",
    "AdaptiveAvgPool2d", "Flatten", "Unflatten", "Dropout", "BatchNorm1d", "BatchNorm2d",
    "LayerNorm", "Embedding", "ReLU", "LeakyReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax",
    "LogSoftmax", "Sequential", "ModuleList", "ModuleDict", "L1Loss", "MSELoss", "SmoothL1Loss",
    "HuberLoss", "NLLLoss", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss",
]
# layer names [special]
__all__ += ["ELU", "SELU", "CELU", "Hardtanh", "ReLU6", "Hardsigmoid", "Hardswish", "Mish",
            "Softplus", "LogSigmoid", "Softsign", "Softmin", "GLU"]
# layer names [shape]
# layer names [sorting]
__all__ += ["KLDivLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss",
            "CosineEmbeddingLoss", "TripletMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss"]
# layer names [nn]
# layer names [vision]
__all__ += ["ConvTranspose1d", "ConvTranspose2d", "Upsample", "UpsamplingNearest2d",
            "UpsamplingBilinear2d", "AvgPool1d", "AdaptiveAvgPool1d", "AdaptiveMaxPool1d",
            "AdaptiveMaxPool2d", "LPPool1d", "LPPool2d", "Dropout1d", "Dropout2d", "AlphaDropout",
            "PixelShuffle", "PixelUnshuffle", "Unfold", "Fold", "ZeroPad1d", "ZeroPad2d",
            "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d", "ReflectionPad2d",
            "ReplicationPad1d", "ReplicationPad2d", "Bilinear", "ZeroPad3d", "ConstantPad3d",
            "ReflectionPad3d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d",
            "CircularPad3d"]
__all__ += ["ParameterList", "ParameterDict", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d"]
__all__ += ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
__all__ += ["MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder",
            "TransformerEncoderLayer", "TransformerDecoderLayer"]
