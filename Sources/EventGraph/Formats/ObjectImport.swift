/// One run of a streamed import: reads the input a batch at a time, commits each batch with
/// its checkpoint, and resumes an interrupted run of the same input.
final class ObjectImport {
  private typealias RawLine = ImportLine

  let store: EventStore
  let model: Model
  let input: JSONLinesInput
  /// The input's lines, parsed a chunk ahead on another thread.
  private let lines: ImportReadAhead
  let options: ImportOptions
  let progress: (Int) -> Void
  let state: ImportState
  private var name = ""
  private var after: UInt64 = 0
  private var lookahead: RawLine?
  private var ended = false
  /// Where the input stood after the last line taken into a batch.
  private var taken = (consumed: 0, hash: JSONLinesInput.hashSeed, line: 0)
  /// While resuming: the identities the interrupted run gave, in line order.
  private var identities: ImportedIdentities?

  init(store: EventStore, input: JSONLinesInput, options: ImportOptions, progress: @escaping (Int) -> Void) {
    self.store = store
    self.model = store.model
    self.input = input
    self.lines = ImportReadAhead(input: input, model: store.model)
    self.options = options
    self.progress = progress
    self.state = ImportState(model: store.model)
  }

  func run() throws -> ImportResult {
    var result = ImportResult()
    guard let first = try read() else { return result }
    name = ImportCheckpoint.name(firstLine: first.bytes[...], newIdentities: options.newIdentities)
    var objects = 0
    if let saved = try store.checkpoint(named: name) {
      let checkpoint = try ImportCheckpoint(bytes: saved, name: name)
      try resume(checkpoint, first)
      (after, objects) = (checkpoint.after, checkpoint.objects)
      result.resumed = (objects: checkpoint.objects, line: checkpoint.line)
      if try peek() == nil {
        if let (label, ref) = state.firstUnresolved() { throw unresolved(label, ref) }
        result.alreadyImported = checkpoint.complete
        if !checkpoint.complete { try markComplete(objects) }
        return result
      }
    } else {
      try refuseExport(first)
      after = try store.read { try $0.logEnd().commit }
      lookahead = first
    }
    let size = options.batch ?? .max
    var metadata = options.metadata
    metadata.extra[ImportCheckpoint.metadataKey] = name
    while let first = try peek() {
      // The batch's lines, kept to run the commit's closure again when the map grows: a
      // single commit of a file reads it again instead, so the file is never held whole.
      var kept: [RawLine]? = options.batch != nil || !input.canRewind ? [] : nil
      var attempts = 0
      var (eof, count) = (false, 0)
      let objectsBefore = objects
      do {
        let written = try store.write(metadata: metadata) { tx in
          state.rollBack()
          if attempts > 0, kept == nil {
            guard input.rewind(to: first.before) else {
              throw StoreError.corrupt("import: the input cannot be read again")
            }
            (lookahead, ended) = (nil, false)
            lines.reset()
          }
          attempts += 1
          let replay = kept ?? []
          var constrained: [(ObjectID, Relationship)] = []
          count = 0
          while true {
            // A batch ends once none of its objects waits for a later line to satisfy a
            // required relationship or a minimum count.
            if count >= size, try Self.satisfied(&constrained, tx) { break }
            let raw: RawLine
            if count < replay.count {
              raw = replay[count]
              taken = (raw.consumed, raw.hash, raw.number)
            } else {
              guard let next = try take() else { break }
              kept?.append(next)
              raw = next
            }
            try process(try item(raw), tx, &constrained)
            count += 1
            if count & 4095 == 0 { progress(taken.consumed) }
          }
          eof = try peek() == nil
          if eof, let (label, ref) = state.firstUnresolved() { throw unresolved(label, ref) }
          let end = eof ? (input.consumed, input.hash, taken.line) : taken
          let checkpoint = ImportCheckpoint(
            offset: end.0, line: end.2, hash: end.1, objects: objectsBefore + count, after: after, complete: eof)
          try tx.setCheckpoint(Checkpoint(name: name, value: checkpoint.bytes))
        }
        state.keep()
        if let c = written.commit { result.commits.append(c) }
      } catch {
        let mapped = lineOf(error)
        state.rollBack()
        throw mapped
      }
      objects += count
      result.objects += count
      progress(taken.consumed)
      if eof { return result }
    }
    // The input ended right after a committed batch (or held no line the checkpoint lacks).
    if let (label, ref) = state.firstUnresolved() { throw unresolved(label, ref) }
    if objects > 0 { try markComplete(objects) }
    return result
  }

  // MARK: - Reading

  private func read() throws -> RawLine? { try lines.line() }

  private func peek() throws -> RawLine? {
    if lookahead == nil && !ended {
      lookahead = try read()
      ended = lookahead == nil
    }
    return lookahead
  }

  /// The next line, taken into the batch.
  private func take() throws -> RawLine? {
    guard let raw = try peek() else { return nil }
    lookahead = nil
    taken = (raw.consumed, raw.hash, raw.number)
    return raw
  }

  private func item(_ raw: RawLine) throws(FormatError) -> ImportItem {
    if let parsed = raw.parsed { return try parsed.get() }
    return try ImportItem(line: raw.number, bytes: raw.bytes[...], model: model)
  }

  // MARK: - Objects and links

  /// Inserts a line's object (with `tx`; while resuming, takes the identity it was given),
  /// links what waited for it, then links its own references to known ids and leaves the
  /// others waiting.
  private func process(_ item: ImportItem, _ tx: Transaction?, _ constrained: inout [(ObjectID, Relationship)])
    throws
  {
    if let earlier = state.objects[item.label] {
      throw FormatError(
        line: item.line, field: "id", message: "'\(item.label)' is already used on line \(earlier.line)")
    }
    let id: ObjectID
    if let tx {
      id = try tx.insert(item.entity, values: item.attributes)
      // `null` gives no value, not even the default.
      for (a, v) in item.attributes where v == nil && a.defaultValue != nil { try tx.set(id, attribute: a, nil) }
      constrained += item.entity.constrainedRelationships.map { (id, $0) }
    } else {
      guard let given = try identities?.next() else {
        throw FormatError(
          line: item.line, message: "the store holds fewer objects of the interrupted import than its checkpoint says")
      }
      id = given
    }
    let object = state.add(item.label, ImportedObject(id: id, line: Int32(clamping: item.line), entity: item.entity.id))
    for ref in state.take(item.label) {
      try link(
        ref.source, ref.relationship, to: object, label: item.label, line: ref.line,
        place: ref.list.map { ($0, Int(ref.index)) }, tx)
    }
    for (r, targets) in item.relationships {
      let line = Int32(clamping: item.line)
      if targets.isEmpty, let place = state.claimPlace(object, r.id) {
        try state.claim(place, ToOneClaim(target: nil, line: line)) {
          "\(item.entity.name).\(r.name) of '\(item.label)'"
        }
      }
      // An ordered list with a target that waits: later targets are placed after the one
      // before them, as they arrive.
      var list: TargetList?
      for (i, t) in targets.enumerated() {
        if let target = state.objects[t] {
          let place = r.isOrdered ? (list.map { ($0, i) } ?? (nil, i)) : nil
          try link(object, r.id, to: target, label: t, line: line, place: place, tx, sourceLabel: item.label)
        } else {
          if r.isOrdered && list == nil { list = TargetList(targets, linked: i) }
          state.wait(
            for: t,
            WaitingReference(source: object, relationship: r.id, line: line, index: Int32(i), list: list))
        }
      }
    }
  }

  /// Links `source.relationship` to `target`, after checking the target's entity and the
  /// claims on to-one sides; with `place`, at the target's place in an ordered list.
  private func link(
    _ source: ImportedObject, _ relationship: PropertyID, to target: ImportedObject,
    label: String, line: Int32, place: (list: TargetList?, index: Int)?, _ tx: Transaction?, sourceLabel: String? = nil
  ) throws {
    guard let se = model.entity(source.entity), case .relationship(let r)? = se.property(relationship)?.kind else {
      throw StoreError.corrupt("import: no relationship \(relationship) in entity \(source.entity.rawValue)")
    }
    guard model.isKind(target.entity, of: r.destination) else {
      throw FormatError(
        line: Int(line), field: "relationships.\(r.name)",
        message: "'\(label)' is not a \(model.entity(r.destination)?.name ?? "?")")
    }
    if let inverse = r.inverse {
      if let place = state.claimPlace(source, r.id) {
        try state.claim(place, ToOneClaim(target: target.id, line: line)) {
          "\(se.name).\(r.name) of \(sourceLabel.map { "'\($0)'" } ?? "the object of line \(line)")"
        }
      }
      if let place = state.claimPlace(target, inverse) {
        try state.claim(place, ToOneClaim(target: source.id, line: line)) {
          "\(model.entity(target.entity)?.name ?? "?").\(model.entity(target.entity)?.property(inverse)?.name ?? "?") of '\(label)'"
        }
      }
    }
    // A resumed run re-reads what its commits linked: counted as linked, not linked again.
    defer { if let place, let list = place.list { state.linked(list, place.index) } }
    guard let tx else { return }
    var position: Int?
    if let place {
      position = try place.list.map { try self.position(after: $0, place.index, in: source.id, r, tx) } ?? place.index
    }
    try tx.link(source.id, r.name, target.id, at: position)
  }

  /// Where a target of an ordered list goes: just after the nearest target before it in
  /// the list that is linked already, or first.
  ///
  /// The nearest linked target comes from the list's counts and its place from the order
  /// keys (both O(log n)); only when that target is no longer in the list (another line
  /// moved it) are the list's members searched. Every target linked through the list is
  /// counted, so none before `index` counted means none before it is in the list: first.
  private func position(after list: TargetList, _ index: Int, in source: ObjectID, _ r: Relationship, _ tx: Transaction)
    throws -> Int
  {
    guard let j = list.nearestLinked(before: index) else { return 0 }
    if let before = state.objects[list.labels[j]],
      let k = try tx.projector.reader.orderedPosition(source, LinkSlot(r.id), of: before.id)
    {
      return k + 1
    }
    let current = try tx.related(source, r.id)
    for j in stride(from: index - 1, through: 0, by: -1) {
      if let before = state.objects[list.labels[j]], let k = current.firstIndex(of: before.id) { return k + 1 }
    }
    return 0
  }

  /// Drops the relationships that hold as the model requires; whether none is left.
  private static func satisfied(_ constrained: inout [(ObjectID, Relationship)], _ tx: Transaction) throws -> Bool {
    try constrained.removeAll { (o, r) in
      let count = try tx.related(o, r.id).count
      if !r.isOptional && count == 0 { return false }
      if let lo = r.minCount, count < lo, count > 0 || !r.isOptional { return false }
      return true
    }
    return constrained.isEmpty
  }

  // MARK: - Resuming

  /// Reads again the lines an interrupted run committed, rebuilding its state from the
  /// identities its commits gave, after checking that the input starts with those bytes.
  private func resume(_ checkpoint: ImportCheckpoint, _ first: RawLine) throws {
    identities = ImportedIdentities(store: store, name: name, after: checkpoint.after)
    defer { identities = nil }
    var none: [(ObjectID, Relationship)] = []
    var raw: RawLine? = first
    while let line = raw {
      taken = (line.consumed, line.hash, line.number)
      try process(try item(line), nil, &none)
      state.keep()
      if line.consumed >= checkpoint.offset { break }
      raw = try read()
    }
    guard taken.consumed == checkpoint.offset, taken.hash == checkpoint.hash else {
      throw FormatError(
        line: min(taken.line, checkpoint.line),
        message:
          "an import that began with the same first line stopped after line \(checkpoint.line) (\(checkpoint.objects) objects), but this input's lines up to there differ: rerun it with the input it read to finish it"
      )
    }
    if try identities?.next() != nil {
      throw FormatError(
        line: checkpoint.line,
        message: "the store holds more objects of the interrupted import than its checkpoint says")
    }
    progress(taken.consumed)
  }

  /// Records that the input ended after the last committed batch.
  private func markComplete(_ objects: Int) throws {
    let checkpoint = ImportCheckpoint(
      offset: input.consumed, line: taken.line, hash: input.hash, objects: objects, after: after, complete: true)
    try store.setCheckpoint(Checkpoint(name: name, value: checkpoint.bytes))
  }

  // MARK: - Refusals

  /// Refuses an export (ids that are store identities) into a store that holds commits:
  /// its objects would get other identities than the file's.
  private func refuseExport(_ first: RawLine) throws {
    guard !options.newIdentities, try store.read({ try $0.logEnd().commit }) > 0 else { return }
    let item = try item(first)
    guard let (entity, _) = ObjectID.parse(item.label), model.entity(named: entity) != nil else { return }
    throw FormatError(
      line: first.number, field: "id",
      message:
        "'\(item.label)' is a store identity: this looks like an export, and the store is not empty, so its objects would get other identities",
      remedy: .newIdentities)
  }

  private func unresolved(_ label: String, _ ref: WaitingReference) -> FormatError {
    let name =
      model.entity(ref.source.entity)?.property(ref.relationship)?.name ?? "#\(ref.relationship.rawValue)"
    return FormatError(
      line: Int(ref.line), field: "relationships.\(name)", message: "'\(label)' is not an id in this file")
  }

  /// A refusal of the model's rules, with the line of the object it names; the objects of
  /// the refused batch that got new identities are named by their lines (those identities
  /// were never committed).
  private func lineOf(_ error: Error) -> Error {
    guard let e = error as? StoreError, let id = e.object?.id,
      let found = state.objects.first(where: { $0.value.id == id })
    else { return error }
    let named = e.renamingObjects { o in
      guard case .inserted? = o.origin, let line = state.objects.first(where: { $0.value.id == o.id })?.value.line
      else { return o }
      var named = o
      named.origin = .line(Int(line))
      return named
    }
    return FormatError(line: Int(found.value.line), message: "\(named)")
  }
}
