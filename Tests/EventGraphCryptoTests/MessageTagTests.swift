import EventGraphCrypto
import TestSupport
import Testing

@Suite("MessageTag: HMAC-SHA-512-256 under a key")
struct MessageTagTests {
  static func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
  }

  @Test("a tag is HMAC-SHA-512 cut to 32 bytes")
  func knownAnswer() throws {
    let key = try SymmetricKey(bytes: Array(0..<32))
    // Python: hmac.new(bytes(range(32)), b"EventGraph", hashlib.sha512).hexdigest()[:64]
    #expect(
      Self.hex(MessageTag.tag(Array("EventGraph".utf8), key: key))
        == "9a33003eb5ee6a6a6d6bbc560bfb4ff4884214388f874574c11d0ed1af9a18b6")
    #expect(MessageTag.byteCount == 32)
  }

  @Test("a tag verifies for its bytes and key only: any changed byte, another key, a cut tag fail")
  func verification() throws {
    var g = SeededGenerator(seed: 3141)
    for _ in 0..<50 {
      let key = try SymmetricKey(bytes: (0..<32).map { _ in UInt8(g.next() & 0xff) })
      let other = try SymmetricKey(bytes: (0..<32).map { _ in UInt8(g.next() & 0xff) })
      let bytes = (0..<g.int(0...300)).map { _ in UInt8(g.next() & 0xff) }
      let tag = MessageTag.tag(bytes, key: key)
      #expect(MessageTag.verify(tag, of: bytes, key: key))
      #expect(MessageTag.verify(tag, of: bytes[...], key: key), "a slice tags as its array")
      #expect(!MessageTag.verify(tag, of: bytes, key: other))
      #expect(!MessageTag.verify(tag.dropLast(), of: bytes, key: key))
      #expect(!MessageTag.verify(tag + [0], of: bytes, key: key))
      if !bytes.isEmpty {
        var changed = bytes
        changed[g.int(0...bytes.count - 1)] ^= UInt8(1 << g.int(0...7))
        #expect(!MessageTag.verify(tag, of: changed, key: key))
      }
      var flipped = tag
      flipped[g.int(0...31)] ^= 0x80
      #expect(!MessageTag.verify(flipped, of: bytes, key: key))
    }
  }
}
