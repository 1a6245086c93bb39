// .pt files written by torch.save: a placeholder until the reader lands, so that other parts link.
#include "common/error.h"
#include "precision/readers.h"

namespace plumb::precision {

std::vector<Tensor> read_pt(const mem::InputBytes& input, const ReadOptions&) {
  throw Error(input.name() + ": .pt reading is not built yet");
}

}  // namespace plumb::precision
