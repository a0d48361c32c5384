import EventGraphCrypto
import TestSupport
import Testing

@Suite("SymmetricKey and BlindHash")
struct KeyTests {
  @Test("a key is made of exactly 32 bytes", arguments: [0, 1, 31, 33, 64])
  func wrongLength(length: Int) throws {
    let error = try cryptoError { _ = try SymmetricKey(bytes: [UInt8](repeating: 1, count: length)) }
    #expect(error.code == .malformed)
    #expect(error.message.contains("\(length)"))
  }

  @Test("a key keeps the bytes it was given; random keys differ")
  func keyBytes() throws {
    let bytes = (0..<32).map { UInt8($0 * 7 % 256) }
    let key = try SymmetricKey(bytes: bytes)
    #expect(key.bytesForTesting == bytes)
    #expect(key.withBytes { Array($0) } == bytes)
    let randoms = (0..<10).map { _ in SymmetricKey.random().bytesForTesting }
    #expect(Set(randoms).count == 10)
    #expect(randoms.allSatisfy { $0.count == 32 })
  }

  @Test("a fingerprint is 16 hex digits, the same for equal keys, and is BLAKE2b keyed with the key")
  func fingerprint() throws {
    let key = try SymmetricKey(bytes: Array(0..<32))
    // Python: hashlib.blake2b(b"EventGraph key fingerprint", key=bytes(range(32)), digest_size=16).hexdigest()[:16]
    #expect(key.fingerprint == "54c9f4bd1d531a33")
    #expect(try SymmetricKey(bytes: Array(0..<32)).fingerprint == key.fingerprint)
    let other = SymmetricKey.random()
    #expect(other.fingerprint != key.fingerprint)
    #expect(other.fingerprint.count == 16)
    #expect(other.fingerprint.allSatisfy { $0.isHexDigit })
  }

  @Test("a blind hash is BLAKE2b keyed with the key, 16 bytes by default")
  func blindHashKnownAnswer() throws {
    let key = try SymmetricKey(bytes: Array(0..<32))
    // Python: hashlib.blake2b(data, key=bytes(range(32)), digest_size=n).hexdigest()
    #expect(BlindHash.hash(Array("alice@example.com".utf8), key: key) == hex("5e6c9ded4b512df3e49598a25df84679"))
    #expect(BlindHash.hash([UInt8](), key: key) == hex("3daf97bce7888fd59773c66bf647459c"))
    #expect(
      BlindHash.hash(Array("alice@example.com".utf8), key: key, length: 32)
        == hex("db991e0af62a5b7d9e0e5a5f11998b39f2ca17cbfb97aa709fd8829304b66f44"))
  }

  @Test(
    "a blind hash is the same for one key and input, and differs across keys and inputs",
    arguments: stressSeeds([11, 12]))
  func blindHashDeterministic(seed: UInt64) throws {
    var rng = SeededGenerator(seed: seed)
    let key = try SymmetricKey(bytes: rng.bytes(32))
    let sameKey = try SymmetricKey(bytes: key.bytesForTesting)
    let otherKey = try SymmetricKey(bytes: rng.bytes(32))
    var hashes: [[UInt8]: [UInt8]] = [:]
    for _ in 0..<50 {
      let input = rng.bytes(rng.int(0...100))
      let hash = BlindHash.hash(input, key: key)
      #expect(hash.count == 16)
      #expect(BlindHash.hash(input, key: key) == hash)
      #expect(BlindHash.hash(input.lazy.map { $0 }, key: sameKey) == hash)
      #expect(BlindHash.hash(input, key: otherKey) != hash)
      hashes[input] = hash
    }
    // Distinct inputs, distinct hashes.
    #expect(Set(hashes.values).count == hashes.count)
  }
}
