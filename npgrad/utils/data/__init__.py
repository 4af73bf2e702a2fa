"""npgrad.utils.data: datasets, samplers and the DataLoader, as in torch.utils.data."""
from __future__ import annotations

from .dataloader import DataLoader, default_collate, default_convert, get_worker_info
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, Subset,
                      TensorDataset, random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "Subset",
           "SubsetRandomSampler", "TensorDataset", "default_collate", "default_convert",
           "get_worker_info", "random_split"]
