#pragma once

// Left-right mirror equivariance of AzNet by weight tying (TrainerOptions::mirror_equivariant,
// docs/nn.md). For a board game whose rules are symmetric under the left-right mirror M and whose
// actions are columns (a cell-read policy head, NetConfig::policy_cell_plane >= 0), a network with
// tied weights computes policy(M x) = reversed policy(x) and wdl(M x) = wdl(x) exactly, in eval
// mode, whatever it has learned: it cannot spend capacity or data on learning the symmetry.
//
// The tying, with F filters and H value_hidden units, both even: channel a of every tower
// activation is the mirror image of channel (a + F/2) mod F (the regular representation of the
// two-element group); the input planes and the heads' 1x1 channels are mirror images of
// themselves; value hidden unit h is unit (h + H/2) mod H's mirror. A weight tensor W is tied when
// W = S(W), S being the mirror of its kernel's columns with its regular dimensions' halves swapped.
//
// ProjectMirrorEquivariant replaces every weight, BatchNorm parameter and running statistic by
// (W + S(W)) / 2: a tied network is left as it is, and projecting after every optimizer step trains
// the tied parameters (SGD, momentum and weight decay are linear, so this is projected gradient
// descent with each tied pair's gradients averaged). Link `az_nn_torch` to include this header.

#include "core/base/status.h"
#include "core/nn/net_config.h"
#include "core/nn/torch_model.h"
#include "core/nn/trainer.h"  // CheckMirrorable

namespace az::nn {

// Projects `model`'s parameters and floating-point buffers onto the tied ones (see above). `model`
// must be an AzNet of a mirrorable config (checked).
void ProjectMirrorEquivariant(AzNetImpl& model);

}  // namespace az::nn
