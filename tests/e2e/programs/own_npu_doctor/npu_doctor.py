"""The program's own module that happens to be named npu_doctor (train.py imports it)."""
VALUE = 42
marks = []


def step():
    marks.append(len(marks))
    return "the program's own step()"
