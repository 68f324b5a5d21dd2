print("every snippet of the documentation compiled")
