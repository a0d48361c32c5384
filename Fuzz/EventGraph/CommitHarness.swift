// Compiled into the EventGraph module by Tools/fuzz only. See Docs/reliability.md, "Fuzzing".

extension Fuzz {
  /// The commit record decoder, `CommitCodec`.
  ///
  /// Any bytes decode or throw a ``CorruptionError``. The checksum (the last four bytes) is not verified first, or the
  /// fuzzer would rarely get past it; the checked path runs too. A record that decodes is encoded again and must
  /// decode, checksum verified, to the same commit and to the same bytes, and the header
  /// read alone must agree with it.
  package static func commit(_ data: UnsafeRawBufferPointer) {
    // The checked path first (it refuses almost every input at the checksum), then the
    // decoder itself: the input is a whole record, its last four bytes the checksum.
    _ = try? CommitCodec.decode(data, context: "fuzz")
    guard let commit = try? CommitCodec.decode(data, context: "fuzz", verifyChecksum: false) else { return }

    let header = try? CommitCodec.decodeHeader(data, context: "fuzz")
    check(header != nil, "the record decodes but its header does not")
    check(header?.number == commit.number, "header number \(header?.number ?? 0) != \(commit.number)")
    check(header?.firstSequence == commit.firstSequence, "header first sequence differs")
    check(header?.eventCount == UInt64(commit.events.count), "header event count differs")

    let encoded = CommitCodec.encode(commit)
    check(encoded.withUnsafeBytes { CommitCodec.checksumMatches($0) }, "an encoded record fails its checksum")
    let again: Commit
    do {
      again = try encoded.withUnsafeBytes { try CommitCodec.decode($0, context: "fuzz") }
    } catch {
      fatalError("fuzz law broken: an encoded record does not decode: \(error)")
    }
    check(again.number == commit.number, "number changed")
    check(again.firstSequence == commit.firstSequence, "first sequence changed")
    check(again.modelVersion == commit.modelVersion, "model version changed")
    check(again.metadata == commit.metadata, "metadata changed")
    check(
      again.time == commit.time,
      "time changed: \(commit.time.timeIntervalSince1970) became \(again.time.timeIntervalSince1970)")
    check(again.events.count == commit.events.count, "event count changed")
    check(CommitCodec.encode(again) == encoded, "encoding is not stable")

    // The streaming reader gives the same events, one at a time.
    var streamed = 0
    encoded.withUnsafeBytes { raw in
      do {
        var reader = try CommitCodec.EventReader(raw, context: "fuzz")
        while try reader.next() != nil { streamed += 1 }
      } catch {
        fatalError("fuzz law broken: the event reader refuses an encoded record: \(error)")
      }
    }
    check(streamed == commit.events.count, "the event reader read \(streamed) events of \(commit.events.count)")
  }
}
