import EventGraphCrypto
import TestSupport
import Testing

@Suite("Seal: XChaCha20-Poly1305 sealing and key wrapping")
struct SealTests {
  @Test("a seal opens to its plaintext under its key and additional data", arguments: stressSeeds([1, 2, 3, 4]))
  func roundTrip(seed: UInt64) throws {
    var rng = SeededGenerator(seed: seed)
    let key = SymmetricKey.random()
    for _ in 0..<50 {
      let plaintext = rng.bytes(rng.int(0...300))
      let ad = rng.bytes(rng.int(0...40))
      let sealed = Seal.seal(plaintext, key: key, additionalData: ad)
      #expect(sealed.count == plaintext.count + Seal.overhead)
      #expect(try Seal.open(sealed, key: key, additionalData: ad) == plaintext)
      // Collections that are not contiguous (copied inside) and slices give the same.
      #expect(try Seal.open(sealed.lazy.map { $0 }, key: key, additionalData: ad.lazy.map { $0 }) == plaintext)
      let framed = [0xAA] + sealed + [0xBB]
      #expect(try Seal.open(framed[1..<(framed.count - 1)], key: key, additionalData: ad) == plaintext)
      let fromLazy = Seal.seal(plaintext.lazy.map { $0 }, key: key, additionalData: ad.lazy.map { $0 })
      #expect(try Seal.open(fromLazy, key: key, additionalData: ad) == plaintext)
    }
  }

  @Test("the ciphertext does not contain the plaintext")
  func ciphertextHidesPlaintext() {
    let plaintext = Array("alice@example.com, 12 Rue de la Paix, Paris".utf8)
    let sealed = Seal.seal(plaintext, key: .random(), additionalData: [])
    #expect(!sealed.contains(run: Array(plaintext.prefix(8))))
  }

  @Test("changing any single byte of a seal makes it fail to open", arguments: stressSeeds([5, 6]))
  func everyByteAuthenticated(seed: UInt64) throws {
    var rng = SeededGenerator(seed: seed)
    let key = SymmetricKey.random()
    let plaintext = rng.bytes(rng.int(1...64))
    let ad = rng.bytes(8)
    let sealed = Seal.seal(plaintext, key: key, additionalData: ad)
    for index in sealed.indices {
      var damaged = sealed
      damaged[index] ^= UInt8(truncatingIfNeeded: rng.int(1...255))
      let error = try cryptoError { _ = try Seal.open(damaged, key: key, additionalData: ad) }
      #expect(error.code == .authenticationFailed, "byte \(index)")
    }
  }

  @Test("a seal does not open under another key or other additional data")
  func wrongKeyOrAdditionalData() throws {
    let key = SymmetricKey.random()
    let sealed = Seal.seal(Array("secret".utf8), key: key, additionalData: [1, 2, 3])
    let otherKey = try cryptoError { _ = try Seal.open(sealed, key: .random(), additionalData: [1, 2, 3]) }
    #expect(otherKey.code == .authenticationFailed)
    for ad: [UInt8] in [[], [1, 2], [1, 2, 4], [1, 2, 3, 0]] {
      let error = try cryptoError { _ = try Seal.open(sealed, key: key, additionalData: ad) }
      #expect(error.code == .authenticationFailed, "additional data \(ad)")
    }
  }

  @Test("sealed bytes shorter than the overhead are malformed; an empty plaintext's seal is exactly the overhead")
  func tooShort() throws {
    let key = SymmetricKey.random()
    for length in [0, 1, 24, Seal.overhead - 1] {
      let error = try cryptoError {
        _ = try Seal.open([UInt8](repeating: 7, count: length), key: key, additionalData: [])
      }
      #expect(error.code == .malformed, "length \(length)")
    }
    let empty = Seal.seal([UInt8](), key: key, additionalData: [9])
    #expect(empty.count == Seal.overhead)
    #expect(try Seal.open(empty, key: key, additionalData: [9]) == [])
    let garbage = try cryptoError {
      _ = try Seal.open([UInt8](repeating: 7, count: Seal.overhead), key: key, additionalData: [])
    }
    #expect(garbage.code == .authenticationFailed)
  }

  @Test("two seals of one plaintext differ, in nonce and in ciphertext")
  func randomNonce() throws {
    let key = SymmetricKey.random()
    let plaintext = [UInt8](repeating: 0x42, count: 32)
    let seals = (0..<20).map { _ in Seal.seal(plaintext, key: key, additionalData: []) }
    #expect(Set(seals).count == seals.count)
    #expect(Set(seals.map { Array($0.prefix(24)) }).count == seals.count)
  }

  @Test("a published XChaCha20-Poly1305 test vector opens (nonce ‖ ciphertext ‖ tag)")
  func knownAnswer() throws {
    // draft-irtf-cfrg-xchacha-03, appendix A.3.1.
    let key = try SymmetricKey(bytes: hex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"))
    let nonce = hex("404142434445464748494a4b4c4d4e4f5051525354555657")
    let ad = hex("50515253c0c1c2c3c4c5c6c7")
    let ciphertext = hex(
      """
      bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b4522f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff921f9664c97637da9768812f615c68b13b52e
      """)
    let tag = hex("c0875924c1c7987947deafd8780acf49")
    let plaintext = Array(
      "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it."
        .utf8)
    #expect(try Seal.open(nonce + ciphertext + tag, key: key, additionalData: ad) == plaintext)
  }

  // MARK: - Wrapping

  @Test("a wrapped key is 72 bytes and unwraps to the same key", arguments: stressSeeds([7, 8]))
  func wrapRoundTrip(seed: UInt64) throws {
    var rng = SeededGenerator(seed: seed)
    let kek = SymmetricKey.random()
    for _ in 0..<20 {
      let key = try SymmetricKey(bytes: rng.bytes(SymmetricKey.byteCount))
      let ad = rng.bytes(8)
      let wrapped = Seal.wrap(key, with: kek, additionalData: ad)
      #expect(wrapped.count == 72)
      #expect(!wrapped.contains(run: key.bytesForTesting))
      let unwrapped = try Seal.unwrap(wrapped, with: kek, additionalData: ad)
      #expect(unwrapped.bytesForTesting == key.bytesForTesting)
      #expect(unwrapped.fingerprint == key.fingerprint)
    }
  }

  @Test("a wrapped key does not unwrap under another key-encryption key, other additional data, or damaged")
  func unwrapRefuses() throws {
    let kek = SymmetricKey.random()
    let key = SymmetricKey.random()
    let wrapped = Seal.wrap(key, with: kek, additionalData: [0, 0, 0, 1])
    let otherKEK = try cryptoError { _ = try Seal.unwrap(wrapped, with: .random(), additionalData: [0, 0, 0, 1]) }
    #expect(otherKEK.code == .authenticationFailed)
    let otherSubject = try cryptoError { _ = try Seal.unwrap(wrapped, with: kek, additionalData: [0, 0, 0, 2]) }
    #expect(otherSubject.code == .authenticationFailed)
    var damaged = wrapped
    damaged[50] ^= 0x80
    let damage = try cryptoError { _ = try Seal.unwrap(damaged, with: kek, additionalData: [0, 0, 0, 1]) }
    #expect(damage.code == .authenticationFailed)
    // A seal of other than 32 bytes is not a wrapped key, even under the right key.
    let notAKey = Seal.seal([UInt8](repeating: 1, count: 31), key: kek, additionalData: [])
    let short = try cryptoError { _ = try Seal.unwrap(notAKey, with: kek, additionalData: []) }
    #expect(short.code == .malformed)
  }
}
