// Compiled into the EventGraph module by Tools/fuzz only. See Docs/reliability.md, "Fuzzing".

extension Fuzz {
  /// The model file loader.
  ///
  /// `Model(json:)`: the JSON parser, the reader of the file's keys, ``ModelBuilder``'s
  /// checks. A model that loads writes its file form
  /// (``Model/jsonText``), which loads to an equal model that writes the same text; its
  /// diagram is drawn.
  package static func model(_ data: UnsafeRawBufferPointer) {
    guard let model = try? Model(json: data, file: "fuzz") else { return }
    let text = model.jsonText
    let again: Model
    do {
      again = try Model(json: Array(text.utf8), file: "fuzz again")
    } catch {
      fatalError("fuzz law broken: a model's own file form does not load: \(error)\n\(text)")
    }
    check(again == model, "a model's file form loads to another model:\n\(text)")
    check(again.jsonText == text, "a model's file form is not stable:\n\(text)")
    _ = model.dot()
  }
}
