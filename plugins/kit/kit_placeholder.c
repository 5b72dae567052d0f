// SPDX-License-Identifier: Apache-2.0
// kit_placeholder.c — keeps the kit library non-empty until the kit lands. Removed by the kit.
int vyre__kit_placeholder;
