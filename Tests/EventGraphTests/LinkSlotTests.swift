import LMDB
import Testing

@testable import EventGraph
@testable import EventGraphModel

@Suite("Link slots: a relationship's own entries and the reverse entries of one without an inverse")
struct LinkSlotTests {
  @Test("every relationship number gives a forward and a reverse slot that keep it and tell themselves apart")
  func roundTrip() {
    for raw in stride(from: UInt16(0), through: 0x7FFF, by: 97) + [0x7FFF] {
      let id = PropertyID(rawValue: raw)
      let forward = LinkSlot(id)
      let reverse = LinkSlot.reverse(of: id)
      #expect(!forward.isReverse && reverse.isReverse, "\(raw)")
      #expect(forward.relationship == id && reverse.relationship == id, "\(raw)")
      #expect(forward < reverse, "reverse slots sort after every forward one: \(raw)")
      #expect(LinkSlot(stored: reverse.stored) == reverse)
    }
  }

  @Test("a link key reads back its slot, its last field, and the target of an ordered entry's value")
  func entryReadBack() {
    let key = StoreKey.link(ObjectID(0x0102_0304), .reverse(of: PropertyID(rawValue: 5)), target: ObjectID(99))
    key.withLMDBBytes { k in
      #expect(LinkEntry.slot(k) == .reverse(of: PropertyID(rawValue: 5)))
      #expect(LinkEntry.last(k) == 99)
      #expect(LinkEntry.target(key: k, value: UnsafeRawBufferPointer(start: nil, count: 0)) == ObjectID(99))
      BigEndianKey(7).withLMDBBytes { v in #expect(LinkEntry.target(key: k, value: v) == ObjectID(7)) }
      // A key cut short names no slot and no target.
      let short = UnsafeRawBufferPointer(rebasing: k[..<9])
      #expect(LinkEntry.slot(short) == nil && LinkEntry.last(short) == nil)
    }
  }
}
