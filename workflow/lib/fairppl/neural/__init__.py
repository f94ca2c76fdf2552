"""A small decoder-only Transformer LM per language, trained resumably and deterministically.

The model is a ``transformers.LlamaForCausalLM`` built from a ``LlamaConfig`` (random init from
the seed, tied input/output embeddings), so that the one scoring path
(``AutoModelForCausalLM.from_pretrained`` + ``AutoTokenizer.from_pretrained`` on one folder, see
``save_lm``) serves it exactly like a pretrained model.

Training data (``pack_sequences``)
    Each unit (a verse, a sentence) becomes ``[bos] + ids + [eos]``; the units are concatenated in
    order and cut into blocks of ``context`` tokens, so a unit may span two blocks. The model thus
    sees ``<s>`` at every unit start (it learns to predict the first token after BOS) and ``</s>``
    at every end. This matches the scoring convention used everywhere else: the input is
    ``[bos] + ids``, the model is charged for ``ids + [eos]``.

    Two details make training match that convention (see ``NeuralConfig.isolate_units``):

    * ``<s>`` is never a target (its label is masked): scoring never predicts it, so the model
      should not spend probability on it.
    * With ``isolate_units`` (the default) every unit is its own sequence inside the block: its
      position ids restart at 0 at its ``<s>`` and it cannot attend to the previous unit
      (transformers builds the block-diagonal causal mask from the position ids). A unit cut by a
      block boundary keeps its true positions in the second block but loses its prefix there.
      Without ``isolate_units`` the blocks are plain running text (GPT-2 style packing).

    The last, incomplete block is padded with ``<pad>`` (masked out of the loss) so no text is
    lost.

Optimisation
    AdamW (betas ``adam_beta1``/``adam_beta2``; weight decay on matrices only, not on norm
    gains), gradient clipping, learning rate with linear warm-up over ``warmup`` steps then cosine
    decay to ``min_lr_ratio * lr`` at ``steps``. Each step draws ``batch_size`` blocks uniformly
    at random (with replacement) from a seeded ``torch.Generator``.

Determinism and resumption
    Model init, batch sampling and dropout are seeded from ``NeuralConfig.seed``; ``train`` turns
    on ``torch.use_deterministic_algorithms(True, warn_only=True)`` for its duration (and sets
    ``CUBLAS_WORKSPACE_CONFIG`` if it is unset, for CUDA). Every ``checkpoint_every`` steps it
    writes ``out_dir/checkpoint.pt`` atomically (temporary file + ``os.replace``; a SIGKILL leaves
    the previous checkpoint or none) with the model, optimizer and scheduler state, the step, the
    batch generator's and the torch/CUDA/Python RNG states, the loss log, the configuration, the
    vocabulary's special ids and a SHA-256 of the packed training data. A later call with the same
    configuration, vocabulary and data resumes from it and reproduces the uninterrupted run
    **bit for bit** on the same device, torch build and thread count (checked in
    tests/unit/test_neural.py). A checkpoint written with a different configuration, vocabulary or
    data is never mixed in: ``train`` raises ``InputError`` naming the differing fields.
    ``checkpoint_every`` and ``eval_every`` do not change the trajectory and are not compared.

Outputs of a finished run (``train``)
    ``out_dir/model/`` (``save_pretrained``, safetensors; with the tokenizer when one is given,
    and ``fairppl_training.json``: the settings, vocabulary and data digest it was trained with;
    sealed, see ``fairppl.core.integrity``), ``out_dir/train_log.tsv`` (step, loss, lr, dev_loss), ``out_dir/train_stats.json``, each
    written to a temporary name and renamed into place, the stats last. Then
    ``checkpoint.pt`` is **deleted** (it holds the optimizer state, about twice the model's size,
    and is useless once the model is final) and ``out_dir/final.pt`` keeps the finished weights,
    loss log and identity (about the model's size). A later call with the same configuration,
    vocabulary and data restores it and saves the same model again without training (what a
    rerun does when Snakemake was interrupted before recording the job's outputs and discards
    them); with other settings it deletes ``final.pt`` and trains from scratch: a finished model
    of other settings never stands in for the configured one. A Snakemake rule should therefore
    declare ``out_dir/model`` and the stats file as outputs, never ``directory(out_dir)``
    (Snakemake would delete the checkpoint with a failed job's outputs).

Device
    ``device="auto"`` is CUDA when ``torch.cuda.is_available()``, else CPU (a rule may declare a
    GPU resource and still runs on CPU). Resuming on another device works but is not bitwise
    identical to an uninterrupted run.

Dropout
    Llama has no residual or MLP dropout; ``NeuralConfig.dropout`` is its attention dropout.

Modules
    ``config`` (``NeuralConfig``), ``model`` (``build_model``, special ids), ``data`` (packing),
    ``loss``, ``optim`` (AdamW and the learning-rate schedule), ``runtime`` (device, determinism,
    threads), ``checkpoint``, ``training`` (``train``; a module named ``train`` would be hidden
    by the function of that name here), ``save`` (outputs, ``save_lm``). The public names are
    imported here: ``from fairppl.neural import train``.
"""

from __future__ import annotations

from .checkpoint import CHECKPOINT_NAME
from .config import NeuralConfig
from .data import pack_sequences
from .loss import mean_nll
from .model import build_model, n_parameters, special_ids_of
from .optim import lr_factor
from .runtime import resolve_device
from .save import LOG_NAME, MODEL_DIR, RECORD_NAME, STATS_NAME, check_trained, save_lm
from .training import train

__all__ = [
    "CHECKPOINT_NAME", "LOG_NAME", "MODEL_DIR", "RECORD_NAME", "STATS_NAME", "NeuralConfig",
    "build_model", "check_trained", "lr_factor", "mean_nll", "n_parameters", "pack_sequences",
    "resolve_device", "save_lm", "special_ids_of", "train",
]
