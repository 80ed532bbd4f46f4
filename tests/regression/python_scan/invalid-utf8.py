import torch
x = "ÿþ"
for i in r:
    z.cuda()
