internal import EventGraphText

/// The JSON form of events (FORMATS.md, "Events as JSON"), as `eventtool log --json` prints them.
extension GraphReading {
  /// One event as a line of JSON, with names resolved through the model, as
  /// `eventtool log --json` prints it.
  public func jsonText(_ event: Event, sequence: UInt64, commit: Commit) -> String {
    json(event, sequence: sequence, commit: commit).serialized()
  }

  /// One event as a JSON object, with names resolved through the model.
  func json(_ event: Event, sequence: UInt64, commit: Commit) -> JSON {
    var f = [
      JSONField("seq", .int(Int64(sequence))), JSONField("commit", .int(Int64(commit.number))),
      JSONField("time", .string(ISO8601.format(commit.time))), JSONField("type", .string(event.kindName)),
      JSONField("object", .string(display(event.object))),
    ]
    let entity = (try? entityID(of: event.object)).flatMap { model.entity($0) }
    func name(_ p: PropertyID) -> String { entity?.property(p)?.name ?? "#\(p.rawValue)" }
    switch event {
    case .insert(_, let e):
      f.append(JSONField("entity", .string(model.entity(e)?.name ?? "#\(e.rawValue)")))
    case .set(_, let a, let v):
      f.append(JSONField("key", .string(name(a))))
      f.append(JSONField("value", v?.json ?? .null))
    case .link(_, let r, let t, let position):
      f.append(JSONField("key", .string(name(r))))
      f.append(JSONField("target", .string(display(t))))
      if let position { f.append(JSONField("position", .int(Int64(position)))) }
    case .unlink(_, let r, let t):
      f.append(JSONField("key", .string(name(r))))
      f.append(JSONField("target", .string(display(t))))
    case .delete:
      break
    case .erase(_, let reason):
      if let reason { f.append(JSONField("reason", .string(reason))) }
    }
    return .object(f)
  }

  /// A one-line human form of an event: `12 set AddressBook/1.phone1 = '123'`.
  public func text(_ event: Event, sequence: UInt64) -> String {
    let entity = (try? entityID(of: event.object)).flatMap { model.entity($0) }
    func name(_ p: PropertyID) -> String { entity?.property(p)?.name ?? "#\(p.rawValue)" }
    let o = display(event.object)
    switch event {
    case .insert(_, let e): return "\(sequence) insert \(o) (\(model.entity(e)?.name ?? "?"))"
    case .set(_, let a, let v): return "\(sequence) set \(o).\(name(a)) = \(v?.displayText ?? "nil")"
    case .link(_, let r, let t, let p):
      return "\(sequence) link \(o).\(name(r)) -> \(display(t))" + (p.map { " at \($0)" } ?? "")
    case .unlink(_, let r, let t): return "\(sequence) unlink \(o).\(name(r)) -x \(display(t))"
    case .delete: return "\(sequence) delete \(o)"
    case .erase(_, let reason): return "\(sequence) erase \(o)" + (reason.map { " (\($0))" } ?? "")
    }
  }
}
