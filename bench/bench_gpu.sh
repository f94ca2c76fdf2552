#!/usr/bin/env bash
# The GPU figures of the scale section (docs/scale.md, "The GPU profile") in one run on a GPU
# machine that has torch and transformers but neither the study nor the model weights.
#
# Here, first (writes BUNDLE: the models' configs and tokenizers, the study's units of six
# languages, polars' wheels where the GPU machine lacks polars):
#     .venv/bin/python bench/bench_lm_batch.py --bundle .gpu --languages eng deu rus ara hin zho
#     tar -C .gpu -cJf .gpu/configs.tar.xz configs && rm -r .gpu/configs   # 37 MB -> 3 MB
# Then, on the GPU machine, from the repository root:
#     bash bench/bench_gpu.sh .gpu OUTDIR
#
# It prints (and writes under OUTDIR) the device, the LM-guided marginal's occupancy with one
# unit and many units per LM call against a bare batched forward (with random weights: speed does
# not depend on the values), canonical scoring's seconds per unit, and the Shannon game's token
# bettors' seconds per truncation. Each step has its own time limit so that one slow step leaves
# the others' figures. Environment: VERSES (20), PASS_TOKENS (16384), LANGS (the six), STEPS
# ("lm_batch shannon"), MODELS and DTYPE (bench_lm_batch.py's --models, --dtype), LAYOUTS ("auto
# one": the KVTree's pass layouts, each timed, the first compared), PASS_TOKENS (16384: the
# Shannon bettors' positions per pass), UNITS_PER_CALL (8: the bettors' units per call, timed
# beside a unit per call), LANES (2: the marginal's batched path in lanes, an extra row),
# LM_LIMIT (300) and SHANNON_LIMIT (120; seconds).
set -u
BUNDLE=${1:-.gpu}
OUTDIR=${2:-${OUT:-/tmp/bench-gpu}}
VERSES=${VERSES:-20}
PASS_TOKENS=${PASS_TOKENS:-16384}
LANGS=${LANGS:-eng deu rus ara hin zho}
STEPS=${STEPS:-lm_batch shannon}
mkdir -p "$OUTDIR"
export PYTHONUNBUFFERED=1
if ! python3 -c "import polars" 2>/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site "$BUNDLE"/whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
if [ -f "$BUNDLE/configs.tar.xz" ] && [ ! -d "$BUNDLE/configs" ]; then
    tar -C "$BUNDLE" -xJf "$BUNDLE/configs.tar.xz" || exit 1
fi
{ nvidia-smi -L; python3 -c "import torch, transformers, polars; print('torch', torch.__version__,
'transformers', transformers.__version__, 'polars', polars.__version__,
'device', torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'none')"; } \
    2>&1 | tee "$OUTDIR/device.txt"

step() {  # step NAME SECONDS COMMAND...: run with a time limit, output to OUTDIR/NAME.txt
    local name=$1 limit=$2; shift 2
    echo "### $name (limit ${limit} s): $*"
    timeout "$limit" "$@" > "$OUTDIR/$name.txt" 2>&1
    echo "### $name: exit $?"
    grep -v "^\s*$" "$OUTDIR/$name.txt" | grep -iv "warn" | tail -n 60
}

for name in $STEPS; do
    case $name in
    lm_batch)
        # shellcheck disable=SC2086  # LANGS: a list
        step lm_batch "${LM_LIMIT:-300}" python3 bench/bench_lm_batch.py --random-weights \
            --config-dir "$BUNDLE/configs" --units "$BUNDLE/units.parquet" --languages $LANGS \
            --verses "$VERSES" -k 32 -m 16 --pass-tokens "$PASS_TOKENS" --bare-batch 64 \
            --score-batch 64 --device cuda --layouts ${LAYOUTS:-auto one} --stages \
            --lanes "${LANES:-2}" \
            ${MODELS:+--models $MODELS} ${DTYPE:+--dtype $DTYPE} ;;
    shannon)
        step shannon "${SHANNON_LIMIT:-120}" python3 bench/bench_shannon_bets.py --random-weights \
            --units "$BUNDLE/units.parquet" --language eng --verses 8 --check-units 100 \
            --naive 2 --model "smollm2-135m=$BUNDLE/configs/smollm2-135m" \
            --model "gemma3-270m=$BUNDLE/configs/gemma3-270m" --device cuda \
            --pass-tokens "${PASS_TOKENS:-16384}" --units-per-call "${UNITS_PER_CALL:-8}" ;;
    *) echo "unknown step $name (expected lm_batch, shannon)"; exit 2 ;;
    esac
done
