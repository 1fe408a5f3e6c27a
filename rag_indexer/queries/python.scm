; Definitions in Python. A function nested in a class becomes a method in the chunker.
(class_definition
  name: (identifier) @name) @definition.class

(function_definition
  name: (identifier) @name) @definition.function
