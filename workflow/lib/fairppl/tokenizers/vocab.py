"""The vocabulary layout every tokenizer here shares: the four special tokens at ids 0-3, the
256 byte tokens at 4-259, and SentencePiece's visible space."""

UNK, BOS, EOS, PAD = "<unk>", "<s>", "</s>", "<pad>"
UNK_ID, BOS_ID, EOS_ID, PAD_ID = 0, 1, 2, 3
SPECIALS = (UNK, BOS, EOS, PAD)
BYTE_TOKENS = tuple(f"<0x{b:02X}>" for b in range(256))
SPACE = "\u2581"  # SentencePiece's visible space, "▁"
