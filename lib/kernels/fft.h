// fft: FFT, IFFT, RFFT and IRFFT over the last len(fft_length) dimensions,
// as separable 1-D transforms in complex<double> (direct DFT per line:
// exact enough for the sizes HLO tests use, not a fast FFT).
#ifndef NEURON_LIB_KERNELS_FFT_H_
#define NEURON_LIB_KERNELS_FFT_H_

#include <string>
#include <vector>

#include "lib/kernels/buffer.h"

namespace neuron::kernels {

void Fft(const Buf& in, const std::string& fft_type, const std::vector<int64_t>& fft_length, Buf& out);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_FFT_H_
