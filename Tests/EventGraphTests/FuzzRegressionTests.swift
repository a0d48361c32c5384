import Foundation
import Testing

@testable import EventGraph
@testable import EventGraphQuery

/// Inputs the fuzzers of `Tools/fuzz` found (Docs/reliability.md, "Fuzzing").
///
/// Each is kept as it was found: it must give a clean error, never a trap, a hang or an outsized
/// allocation. The same inputs are in `Fuzz/corpus`, so the fuzzers start from them too.
@Suite("Inputs the fuzzers found")
struct FuzzRegressionTests {
  /// The bytes of a hex literal (spaces ignored).
  static func bytes(_ hex: String) -> [UInt8] {
    let digits = Array(hex.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16) ?? 0 }
  }

  /// An `objects` record naming property 65535.
  ///
  /// Entity 0, one entry for property 65535 (`ff ff 03`) and no value: the record decoders grew the object's values to 65,536 slots before reading
  /// the value (a 2 MB allocation per damaged record, the record fuzzer ran 25 times
  /// slower on such inputs). A property beyond the entity's is now corruption.
  @Test func recordWithAPropertyBeyondTheEntity() throws {
    let model = try ProjectedObjectTests.model()
    let record = Self.bytes("00 01 ff ff 03 00")
    let error = record.withUnsafeBytes { raw in
      #expect(throws: CorruptionError.self) { try ObjectState.decode(raw, id: ObjectID(1), model: model) }
    }
    #expect(error?.reason.contains("beyond the") == true)
    let projected = record.withUnsafeBytes { raw in
      #expect(throws: CorruptionError.self) { try ProjectedObject.decode(raw, id: ObjectID(1), model: model) }
    }
    #expect(projected?.reason == error?.reason)
    // Property 13, just past the model's 13 properties (0...12), is refused too; 12 is read.
    for (hex, valid) in [("00 01 0d 00", false), ("00 01 0c 00", true)] {
      let r = Self.bytes(hex)
      let state = r.withUnsafeBytes { try? ObjectState.decode($0, id: ObjectID(1), model: model) }
      #expect((state != nil) == valid, "\(hex)")
    }
  }

  /// A commit whose time is near the largest the record holds (±2^63 milliseconds).
  ///
  /// Read back, its time became 0 when written again: the conversion from a `Date` gave 0
  /// for anything beyond `Int64.max` milliseconds, and `Int64.max` itself, as a `Double`,
  /// rounds up to 2^63. Times are now clamped to the field's range, so a record's time is
  /// written back as itself.
  @Test func commitTimeAtTheEdgeOfItsField() throws {
    let record = Self.bytes("0103 2aa2 feff ffff ffff ffff 51c6 6800 0204 020d 0105 025e 6d5a 74")
    let commit = try record.withUnsafeBytes { try CommitCodec.decode($0, context: "fuzz", verifyChecksum: false) }
    let again = try CommitCodec.encode(commit).withUnsafeBytes { try CommitCodec.decode($0, context: "again") }
    #expect(again.time == commit.time)
    #expect(commit.time.timeIntervalSince1970 > 9e15 || commit.time.timeIntervalSince1970 < -9e15)
    for edge in [Int64.max, Int64.min, 0, 1, -1] {
      let date = Date(timeIntervalSince1970: Double(edge) / 1000)
      #expect(
        CommitCodec.milliseconds(Date(timeIntervalSince1970: Double(CommitCodec.milliseconds(date)) / 1000))
          == CommitCodec.milliseconds(date))
    }
  }

  /// A date in an import line with more than three fractional digits.
  ///
  /// It was kept to the last digit but written back to milliseconds, so an exported value
  /// did not read back as the value stored. Dates are read to the nearest millisecond, the
  /// precision every public form shows.
  @Test func dateWithMoreDigitsThanMilliseconds() throws {
    let text = "2023-11-14T22:13:20.126666666666666666666663Z"
    let value = try #require(try Value.fromJSON(.string(text), as: .date))
    #expect(value.json == .string("2023-11-14T22:13:20.127Z"))
    #expect(try Value.fromJSON(value.json, as: .date) == value)
  }

  /// An empty pattern at the end of the text: `'\r' ENDSWITH ''`, found by `predicate`.
  ///
  /// The check that a match does not split a CR LF pair read the byte past the end there (an
  /// index out of bounds, a trap). Kept in `Fuzz/corpus/predicate/finding-empty-pattern-after-cr`.
  @Test(arguments: ["\r", "a\r", "\r\n", "", "ab"])
  func emptyPatternAtTheEndOfTheText(_ text: String) {
    for lowercase in [false, true] {
      #expect(StringMatching.testASCII(.endsWith, text, [], lowercase: lowercase))
      #expect(StringMatching.testASCII(.beginsWith, text, [], lowercase: lowercase))
      #expect(StringMatching.testASCII(.contains, text, [], lowercase: lowercase))
      #expect(StringMatching.testASCII(.equal, text, [], lowercase: lowercase) == text.isEmpty)
    }
  }
}
