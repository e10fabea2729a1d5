// Pytree paths as key sequences. JAX records each entry parameter's path in
// its metadata (op_name="args[1][0][0]['params']['layer_0']['w']",
// "inputs['token_ids']", "state[1][0]"), and bundles key their arrays by
// paths spelled other ways ("params/layer_0/w" as flax's flatten_dict
// writes it, "params.layer_0.w"). Compared as key sequences, the spellings
// agree: ["args", "1", "0", "0", "params", "layer_0", "w"].
#ifndef NEURON_LIB_TENSORFILE_KEY_PATH_H_
#define NEURON_LIB_TENSORFILE_KEY_PATH_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace neuron::tensorfile {

using KeyPath = std::vector<std::string>;

// Splits a path written with Python subscripts ('[0]', "['w']", '["w"]'),
// '/' or '.' separators, or a mix. nullopt for text that is no path (an
// unclosed bracket, a parenthesis or space outside quotes: JAX's op_names
// of non-parameters, "jit(f)/dot_general").
std::optional<KeyPath> ParseKeyPath(std::string_view text);

// Whether `keys` is the whole of `path` or its end.
bool IsSuffix(const KeyPath& keys, const KeyPath& path);

// The path as Python subscripts after its first key: args[1]['params'].
std::string FormatKeyPath(const KeyPath& path);

}  // namespace neuron::tensorfile

#endif  // NEURON_LIB_TENSORFILE_KEY_PATH_H_
