#if canImport(Glibc)
  import Glibc
#endif

/// SplitMix64: the one seeded generator of every randomized test, so that a failure
/// reproduces from its seed.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
  public var state: UInt64

  public init(seed: UInt64) { state = seed }

  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// True with probability `p`.
  public mutating func chance(_ p: Double) -> Bool { Double(next() >> 11) / Double(1 << 53) < p }

  /// One of `items` (which must not be empty).
  public mutating func pick<T>(_ items: [T]) -> T { items[Int(next() % UInt64(items.count))] }

  /// A number in `range`.
  public mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
}

/// How much longer the randomized tests run: 1 normally, the value of the environment
/// variable `EVENTGRAPH_STRESS` under `Tools/stress` (more rounds, more seeds).
public let stressFactor: Int = {
  guard let text = getenv("EVENTGRAPH_STRESS"), let n = Int(String(cString: text)), n > 1 else { return 1 }
  return min(n, 1000)
}()

/// The seeds of a randomized test: `base` normally; under `Tools/stress` as many more again
/// for each step of the stress factor, each new seed derived from one of `base`.
public func stressSeeds(_ base: [UInt64]) -> [UInt64] {
  guard stressFactor > 1 else { return base }
  let more = (1..<stressFactor).flatMap { round in
    base.map { $0 &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(round) }
  }
  return base + more
}

/// The cases of a randomized test numbered by case: `0..<count` normally, `stressFactor`
/// times as many under `Tools/stress`.
public func stressCases(_ count: UInt64) -> Range<UInt64> { 0..<(count * UInt64(stressFactor)) }
