// Compiled into the EventGraph module by Tools/fuzz only. See Docs/reliability.md, "Fuzzing".

extension Fuzz {
  /// The `objects` record decoders.
  ///
  /// ``ObjectState/decode(_:id:model:)`` and ``ProjectedObject/decode(_:id:model:)`` (which
  /// checks entries without decoding them) must accept and refuse the same records; what they read must be the same state;
  /// a state encodes to a record that decodes to a state that encodes to the same bytes;
  /// a projected object re-encodes its kept entries to a record that decodes to that state.
  package static func record(_ data: UnsafeRawBufferPointer) {
    let model = Fuzz.model
    let id = ObjectID(7)
    let state: ObjectState?
    do {
      state = try ObjectState.decode(data, id: id, model: model)
    } catch {
      state = nil
    }
    let projected: ProjectedObject?
    do {
      projected = try ProjectedObject.decode(data, id: id, model: model)
    } catch {
      projected = nil
    }
    check((state == nil) == (projected == nil), "the two record decoders disagree on whether the record is valid")
    guard let state, let projected else { return }

    let encoded = state.encoded()
    let again: ObjectState
    do {
      again = try encoded.withUnsafeBytes { try ObjectState.decode($0, id: id, model: model) }
    } catch {
      fatalError("fuzz law broken: an encoded object record does not decode: \(error)")
    }
    check(again.entity == state.entity, "entity changed")
    check(again.encoded() == encoded, "object record encoding is not stable")

    // The projected object, whether it kept its entries encoded or decoded them, reads the
    // same values and writes a record that decodes to the same state.
    let projectedState: ObjectState
    var w = BinaryWriter()
    do {
      projectedState = try projected.state()
      try projected.encode(into: &w)
    } catch {
      fatalError("fuzz law broken: a projected object that decoded does not read: \(error)")
    }
    check(projectedState.encoded() == encoded, "the projected object's state is not the decoded state")
    let reencoded: ObjectState
    do {
      reencoded = try w.bytes.withUnsafeBytes { try ObjectState.decode($0, id: id, model: model) }
    } catch {
      fatalError("fuzz law broken: a projected object's record does not decode: \(error)")
    }
    check(reencoded.encoded() == encoded, "the projected object's record is not the state's")
    for i in state.values.indices {
      let p = PropertyID(rawValue: UInt16(i))
      let v = try? projected.value(p)
      check((v == nil) == (state[p] == nil), "property \(i): the two decoders differ")
    }
  }
}
