"""Bounds on everything an AIBench import reads: files, graphs, questions, images.

The real AIBench has 300 papers, 19 questions a paper, graphs of a few dozen nodes and images of
about 1024 x 1024; the bounds leave ample room above that and refuse what no paper needs.
"""

MAX_PAPER_FILE_BYTES = 5_000_000
MAX_PAPERS = 5_000
MAX_SYSTEMS = 200
MAX_IMAGE_FILES = 200_000
MAX_PHASES = 100
MAX_NODES = 1_000
MAX_EDGES = 5_000
MAX_QUESTIONS = 500
MAX_ID_CHARS = 200
MAX_LABEL_CHARS = 1_000
MAX_QUESTION_CHARS = 5_000
MAX_METHOD_TEXT_CHARS = 500_000
MIN_OPTIONS, MAX_OPTIONS = 2, 4
#: An image file larger than this is refused before it is read.
MAX_IMAGE_BYTES = 25_000_000
#: An image declaring more pixels than this is refused before it is decoded (decompression bombs).
MAX_IMAGE_PIXELS = 4096 * 4096
MAX_IMAGE_SIDE = 8192
MAX_AESTHETICS_FILE_BYTES = 50_000_000
MAX_PREDICTIONS_FILE_BYTES = 500_000_000
MAX_PREDICTION_LINE_CHARS = 100_000
