/**
 * @module
 * Seeds as the engines can take them. A request may send any integer (negative, or past 2^53);
 * each engine's generator takes a narrower range, and WebLLM's is a linear congruential one whose
 * first draw is nearly proportional to its seed: seeds 42, 43, 44 draw 0.000944, 0.000967,
 * 0.000989, so choices seeded `seed + i` would all share their first token. Seeds are therefore
 * mixed (SplitMix64's finaliser) before they reach it.
 */

const MASK_64 = (1n << 64n) - 1n;

/** SplitMix64's finaliser: every bit of `x` moves every bit of the result. */
function mix64(x: bigint): bigint {
  let z = x & MASK_64;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK_64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK_64;
  return z ^ (z >> 31n);
}

/** A 32-bit hash of `seed` (any integer) and `stream`: far apart for neighbouring inputs. */
export function mixSeed(seed: number, stream: number): number {
  const base = BigInt.asUintN(64, BigInt(seed));
  const golden = 0x9e3779b97f4a7c15n;
  return Number(mix64(base + BigInt(stream + 1) * golden) >> 32n);
}

/**
 * The seed of choice `choice` of a request seeded `seed`: the first is the request's own (so one
 * choice of `n` and a request with `n` = 1 agree), each other a hash of the seed and its index.
 */
export function choiceSeed(seed: number, choice: number): number {
  return choice === 0 ? seed : mixSeed(seed, choice);
}

/** The modulus of WebLLM's (tvmjs's) `LinearCongruentialGenerator`, 2^31 − 1. */
const LCG_MODULUS = 2_147_483_647;

/**
 * A request's seed as WebLLM's generator takes it: in 1 … 2^31 − 2 (it throws "Random state is
 * unexpectedly not strictly positive" for a negative one), hashed so that neighbouring seeds do
 * not draw neighbouring numbers. The same seed, the same stream.
 */
export function webllmSeed(seed: number): number {
  return 1 + (mixSeed(seed, 0) % (LCG_MODULUS - 1));
}
